//go:build race

package store

// raceEnabled: sync.Pool drops items at random under the race detector, so
// allocation counts are meaningless there.
const raceEnabled = true
