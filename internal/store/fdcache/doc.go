// Package fdcache bounds the files a store keeps open. A store with many
// small files (a ConsumeQueue file per queue, later index files) cannot hold
// one descriptor per file: with 100,000 queues it runs out of descriptors
// (EMFILE) and then fails everything that opens a file, sockets included.
//
// A Cache knows files by path (File) and opens each on demand. At most Max
// files are open at once: before opening one, the cache closes idle files,
// least recently used first. A file in use (between Hold and Release, or
// during one ReadAt/WriteAt/Sync/...) is never closed underneath its user;
// only when more than Max files are in use at once does the count exceed
// Max, and it falls back to Max as they are released.
//
// Durability across a close: a file written since its last successful Sync
// is synced before its descriptor is closed (on Linux a writeback error is
// reported to the descriptors open when it happens, so an fsync through a
// later descriptor could miss it and claim success for lost data). A failed
// sync or close is sticky: every later Sync of that File reports it, so the
// owner never takes the file for durable. A closed File with no sticky
// error therefore has every write durable, and Sync returns at once without
// reopening it.
//
// Forget is for files about to be deleted: their unsynced data does not
// matter, so they are closed (when idle) without a sync.
package fdcache
