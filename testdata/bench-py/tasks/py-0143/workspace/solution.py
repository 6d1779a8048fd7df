def queue_time(customers, tills):
    """Minutes until a queue with these service times is done, served by n tills (first free till next)."""
    raise NotImplementedError
