// Package config holds rocketd's configuration structs, their defaults and
// validation, and the loader for the Java properties files RocketMQ
// operators already have (broker.conf, namesrv.conf).
//
// Shape (style.md §8): plain structs whose zero value means "default",
// EnsureDefaults() to fill them in, Validate() to reject what cannot work.
// Configuration is loaded once in cmd/ and passed down; there are no globals.
//
// File format: java.util.Properties text (see ParseProperties for the exact
// rules: '#'/'!' comment lines, '=' ':' or blank separators, backslash
// continuations and escapes). Bind maps keys onto struct fields by name, as
// RocketMQ maps them onto setters, and returns unknown keys so the caller can
// warn about them.
package config
