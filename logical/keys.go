package logical

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// KeyPrefix versions the key derivation.
const KeyPrefix = "dhtsync/v1/"

// MaxResourceLen bounds a resource name, in bytes.
const MaxResourceLen = 1024

// Key is a replica's Kademlia key.
type Key [sha256.Size]byte

// ReplicaKey is the key of replica i of resource: SHA-256(KeyPrefix + resource +
// "/" + decimal(i)).
func ReplicaKey(resource string, i int) (Key, error) {
	if err := ValidateResource(resource); err != nil {
		return Key{}, err
	}
	if i < 0 {
		return Key{}, fmt.Errorf("logical: replica index %d is negative", i)
	}
	return sha256.Sum256([]byte(KeyPrefix + resource + "/" + strconv.Itoa(i))), nil
}

// ReplicaKeys is the keys of replicas 0..n-1 of resource.
func ReplicaKeys(resource string, n int) ([]Key, error) {
	if n < 1 {
		return nil, fmt.Errorf("logical: need at least one replica, got %d", n)
	}
	keys := make([]Key, n)
	for i := range keys {
		k, err := ReplicaKey(resource, i)
		if err != nil {
			return nil, err
		}
		keys[i] = k
	}
	return keys, nil
}

// ValidateResource checks a resource name: non-empty UTF-8 of at most
// MaxResourceLen bytes.
func ValidateResource(resource string) error {
	switch {
	case resource == "":
		return errors.New("logical: empty resource name")
	case len(resource) > MaxResourceLen:
		return fmt.Errorf("logical: resource name of %d bytes exceeds %d", len(resource), MaxResourceLen)
	case !utf8.ValidString(resource):
		return errors.New("logical: resource name is not valid UTF-8")
	}
	return nil
}
