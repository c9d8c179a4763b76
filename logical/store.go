package logical

import (
	"github.com/ipfs/go-datastore"
	leveldb "github.com/ipfs/go-ds-leveldb"
)

// OpenStore opens (or creates) an on-disk replica store in dir, for
// Config.Store: a peer restarted with the same identity and store resumes its
// replicas. Close it after the peer.
func OpenStore(dir string) (interface {
	datastore.Batching
	Close() error
}, error) {
	return leveldb.NewDatastore(dir, nil)
}
