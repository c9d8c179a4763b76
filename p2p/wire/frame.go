package wire

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protodelim"
	"google.golang.org/protobuf/proto"

	"github.com/dhtsync/dhtsync/p2p/wire/pb"
)

// WriteFrame writes env preceded by its length as a varint. It refuses an
// envelope over max bytes rather than send what the receiver would refuse.
func WriteFrame(w io.Writer, env *pb.Envelope, max int) error {
	if size := proto.Size(env); size > max {
		return fmt.Errorf("wire: message of %d bytes exceeds the cap of %d", size, max)
	}
	_, err := protodelim.MarshalTo(w, env)
	return err
}

// ErrTooLarge is returned for a frame over the cap. It wraps [ErrMalformed];
// unlike other malformed frames it leaves the stream out of step (the frame
// was not read), so the stream must be reset.
var ErrTooLarge = fmt.Errorf("%w: frame too large", ErrMalformed)

// ReadFrame reads one length-delimited envelope of at most max bytes. Errors
// of the stream (EOF, deadline, reset) come back as they are; a frame that is
// too long or does not parse is an error wrapping [ErrMalformed], after which
// the stream is out of step and must be reset.
func ReadFrame(r *bufio.Reader, max int) (*pb.Envelope, error) {
	size, err := binary.ReadUvarint(r)
	if err != nil {
		if err == io.EOF {
			return nil, err
		}
		return nil, fmt.Errorf("wire: reading a frame length: %w", err)
	}
	if size > uint64(max) {
		return nil, fmt.Errorf("%w: frame of %d bytes exceeds the cap of %d", ErrTooLarge, size, max)
	}
	buf := make([]byte, size)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, fmt.Errorf("wire: reading a frame of %d bytes: %w", size, err)
	}
	env := &pb.Envelope{}
	if err := proto.Unmarshal(buf, env); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return env, nil
}
