package config

import (
	"reflect"
	"slices"
	"strings"
)

// noEffectKeys are the keys of the struct src points to tagged
// `effect:"none"`: accepted from a Java config file, parsed and validated,
// but nothing in rocketd reads them.
func noEffectKeys(src any) map[string]bool {
	out := map[string]bool{}
	t := reflect.TypeOf(src).Elem()
	for i := range t.NumField() {
		if f := t.Field(i); f.Tag.Get("effect") == "none" {
			out[f.Tag.Get("prop")] = true
		}
	}
	return out
}

// NoEffectBrokerKeys returns, sorted and spelled as in props, the broker
// keys props sets that are tagged `effect:"none"`, so that the caller
// warns once at load that they are accepted but change nothing. Keys match
// as Bind matches them (case-insensitive, old spellings resolved).
func NoEffectBrokerKeys(props Properties) []string {
	none := map[string]bool{}
	for k := range noEffectKeys(&BrokerConfig{}) {
		none[strings.ToLower(k)] = true
	}
	var out []string
	for k := range props {
		key := k
		if cur, ok := brokerKeyAliases[k]; ok {
			key = cur
		}
		if none[strings.ToLower(key)] {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// NoEffectWarning is the log message for NoEffectBrokerKeys' answer.
const NoEffectWarning = "config keys accepted, have no effect in rocketd"
