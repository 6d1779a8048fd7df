from acx_oci.cli import main

main()
