//go:build !race

package commitlog

const raceEnabled = false
