"""A transparency log, pure: RFC 6962 Merkle trees and the C2SP formats (signed-note, tlog-checkpoint,
tlog-cosignature, tlog-tiles), with no network and no files; fetching is a function the caller injects."""
