// Package pb holds the generated protobuf code of the dhtsync wire format
// (wire.proto). Regenerate with go generate after changing wire.proto.
package pb

//go:generate protoc --go_out=. --go_opt=paths=source_relative wire.proto
