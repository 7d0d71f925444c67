//go:build !race

package ha_test

const raceEnabled = false
