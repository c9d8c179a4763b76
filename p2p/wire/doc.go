// Package wire is the dhtsync wire format: the protocol IDs, the conversion
// between the protocol cores' messages and the protobuf envelopes of
// [github.com/dhtsync/dhtsync/p2p/wire/pb], replica states for hand-off and
// storage, and length-delimited framing with a size cap.
//
// Decoding is strict: an envelope that names an impossible address, lacks a
// required field or carries a snapshot that does not fit together is an error,
// never a panic or a half-filled message, since any peer may send anything.
package wire
