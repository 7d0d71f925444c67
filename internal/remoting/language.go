package remoting

// LanguageCode is the sender's implementation language carried in every
// command header (rocketmq-spec.md §1.5). JSON headers carry the enum name,
// ROCKETMQ binary headers one byte. The values are fixed by the protocol.
type LanguageCode uint8

// Language codes. NODE_JS exists in 5.x only.
const (
	JAVA    LanguageCode = 0
	CPP     LanguageCode = 1
	DOTNET  LanguageCode = 2
	PYTHON  LanguageCode = 3
	DELPHI  LanguageCode = 4
	ERLANG  LanguageCode = 5
	RUBY    LanguageCode = 6
	OTHER   LanguageCode = 7
	HTTP    LanguageCode = 8
	GO      LanguageCode = 9
	PHP     LanguageCode = 10
	OMS     LanguageCode = 11
	RUST    LanguageCode = 12
	NODE_JS LanguageCode = 13 //nolint:revive // the protocol's own spelling
)

var languageNames = [...]string{
	JAVA: "JAVA", CPP: "CPP", DOTNET: "DOTNET", PYTHON: "PYTHON", DELPHI: "DELPHI",
	ERLANG: "ERLANG", RUBY: "RUBY", OTHER: "OTHER", HTTP: "HTTP", GO: "GO", PHP: "PHP",
	OMS: "OMS", RUST: "RUST", NODE_JS: "NODE_JS",
}

// String returns the Java enum name; codes this side does not know print as
// "OTHER", which is also what they decode to.
func (l LanguageCode) String() string {
	if int(l) < len(languageNames) {
		return languageNames[l]
	}
	return "OTHER"
}

// languageOf maps a received byte to a known code. Java decodes an unknown
// byte to null; we carry on with OTHER (spec §1.5).
func languageOf(b uint8) LanguageCode {
	if int(b) < len(languageNames) {
		return LanguageCode(b)
	}
	return OTHER
}

// languageByName maps a JSON language name to its code; unknown names (and
// the empty string) are OTHER. The byte-slice form lets the JSON scanner
// look a name up without allocating a string.
func languageByName(name []byte) LanguageCode {
	switch string(name) {
	case "JAVA":
		return JAVA
	case "CPP":
		return CPP
	case "DOTNET":
		return DOTNET
	case "PYTHON":
		return PYTHON
	case "DELPHI":
		return DELPHI
	case "ERLANG":
		return ERLANG
	case "RUBY":
		return RUBY
	case "HTTP":
		return HTTP
	case "GO":
		return GO
	case "PHP":
		return PHP
	case "OMS":
		return OMS
	case "RUST":
		return RUST
	case "NODE_JS":
		return NODE_JS
	}
	return OTHER
}
