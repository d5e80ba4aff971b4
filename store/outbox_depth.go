package store

import (
	"bytes"
	"encoding/binary"

	bolt "go.etcd.io/bbolt"
)

// The outbox depth (GET /metrics): how many deliveries each environment
// holds, by destination and status, kept as counters in the meta bucket
// under "outbox-depth|" + env | destination | status. Every change of a
// delivery's status or destination, and every removal, goes through its
// filter index (t.reindex on deliveries_bits), which adjusts the counters in
// the same transaction, so they are exact and a scrape reads a dozen keys
// whatever the number of deliveries. A file written before the counters
// existed gets them counted once, at Open (ensureDepth).

var (
	keyDepthPrefix = []byte("outbox-depth|")
	keyDepthBuilt  = []byte("outbox-depth") // meta: set once the counters are complete
)

// OutboxDepth is the number of deliveries of one environment, destination
// and status.
type OutboxDepth struct {
	Env         Env
	Destination string
	Status      string
	Count       int64
}

func depthKey(env Env, dest, status string) []byte {
	return []byte(string(keyDepthPrefix) + string(env) + "|" + dest + "|" + status)
}

// deliveryLabels returns the status and destination among a delivery's
// filter-index keys; ok is false for none (a delivery not yet indexed).
func deliveryLabels(keys []fkey) (status, dest string, ok bool) {
	for _, k := range keys {
		switch k.field {
		case fDeliveryStatus:
			status, ok = k.value, true
		case fDeliveryDestination:
			dest = k.value
		}
	}
	return status, dest, ok
}

// countDelivery moves one delivery of env from the counter of its old
// filter keys to that of its new ones (either nil: created or removed).
func (t *txn) countDelivery(env Env, old, cur []fkey) error {
	os, od, had := deliveryLabels(old)
	ns, nd, has := deliveryLabels(cur)
	if had == has && os == ns && od == nd {
		return nil
	}
	if had {
		if err := t.addDepth(depthKey(env, od, os), -1); err != nil {
			return err
		}
	}
	if has {
		return t.addDepth(depthKey(env, nd, ns), 1)
	}
	return nil
}

// addDepth adds n to the counter at key. An operation of a group commit
// (updateIn) only notes the change; the group writes each counter it
// changed once, before it commits (committer.counts), instead of a read
// and a write per delivery: complyperf's withdrawals changed about fifty
// counters per commit, all of them among a handful of keys.
func (t *txn) addDepth(key []byte, n int64) error {
	if !t.grouped {
		return addCount(t.Bucket(bucketMeta), key, n)
	}
	t.counts = t.counts.add(string(key), n)
	return nil
}

// counterChanges are changes of counters of the meta bucket, one entry per
// counter.
type counterChanges []counterChange

type counterChange struct {
	key string
	n   int64
}

// add adds n to key's change. Few keys change, so a walk finds it.
func (cs counterChanges) add(key string, n int64) counterChanges {
	for i := range cs {
		if cs[i].key == key {
			cs[i].n += n
			return cs
		}
	}
	return append(cs, counterChange{key, n})
}

// write adds the changes to the counters in meta.
func (cs counterChanges) write(meta *bolt.Bucket) error {
	for _, c := range cs {
		if c.n == 0 {
			continue
		}
		if err := addCount(meta, []byte(c.key), c.n); err != nil {
			return err
		}
	}
	return nil
}

func addCount(b *bolt.Bucket, key []byte, n int64) error {
	var v int64
	if c := b.Get(key); len(c) == 8 {
		v = int64(binary.BigEndian.Uint64(c))
	}
	return b.Put(key, binary.BigEndian.AppendUint64(nil, uint64(max(v+n, 0))))
}

// ensureDepth counts the deliveries of a file whose counters were never
// built: one pass over them, once in the file's life; a fresh file has
// nothing to count.
func (s *Store) ensureDepth() error {
	built := false
	counts := map[string]int64{}
	err := s.db.View(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketMeta).Get(keyDepthBuilt) != nil {
			built = true
			return nil
		}
		for _, env := range Envs() {
			err := envBucket(tx, env, "deliveries").ForEach(func(_, v []byte) error {
				var d diskDelivery
				if err := unmarshalDelivery(v, &d); err != nil {
					return err
				}
				counts[string(depthKey(env, d.Destination, d.Status))]++
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil || built {
		return err
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		var stale [][]byte
		c := meta.Cursor()
		for k, _ := c.Seek(keyDepthPrefix); k != nil && bytes.HasPrefix(k, keyDepthPrefix); k, _ = c.Next() {
			stale = append(stale, bytes.Clone(k))
		}
		for _, k := range stale {
			if err := meta.Delete(k); err != nil {
				return err
			}
		}
		for k, n := range counts {
			if err := meta.Put([]byte(k), binary.BigEndian.AppendUint64(nil, uint64(n))); err != nil {
				return err
			}
		}
		return meta.Put(keyDepthBuilt, []byte{1})
	})
}

// outboxDepth reads the counters.
func (t *txn) outboxDepth() []OutboxDepth {
	var out []OutboxDepth
	c := t.Bucket(bucketMeta).Cursor()
	for k, v := c.Seek(keyDepthPrefix); k != nil && bytes.HasPrefix(k, keyDepthPrefix); k, v = c.Next() {
		parts := bytes.SplitN(k[len(keyDepthPrefix):], []byte("|"), 3)
		if len(parts) != 3 || len(v) != 8 {
			continue
		}
		out = append(out, OutboxDepth{Env: Env(parts[0]), Destination: string(parts[1]), Status: string(parts[2]),
			Count: int64(binary.BigEndian.Uint64(v))})
	}
	return out
}
