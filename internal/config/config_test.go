package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestParseProperties(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want Properties
	}{
		{"empty", "", Properties{}},
		{"basic", "brokerName=broker-a\nbrokerId=0\n", Properties{"brokerName": "broker-a", "brokerId": "0"}},
		{"comments", "# c\n! also\n   # indented\nk=v\n", Properties{"k": "v"}},
		{"inline hash is value", "k=v # not a comment", Properties{"k": "v # not a comment"}},
		{"colon", "k:v\nk2 : v2", Properties{"k": "v", "k2": "v2"}},
		{"blank separator", "k v w", Properties{"k": "v w"}},
		{"blank then equals", "k   =   v", Properties{"k": "v"}},
		{"trailing blanks kept", "k=v  ", Properties{"k": "v  "}},
		{"key only", "lonely", Properties{"lonely": ""}},
		{"empty value", "k=", Properties{"k": ""}},
		{"crlf", "a=1\r\nb=2\r\n", Properties{"a": "1", "b": "2"}},
		{"continuation", "k=one,\\\n    two,\\\n\tthree\n", Properties{"k": "one,two,three"}},
		{"even backslashes do not continue", "k=a\\\\\nj=b", Properties{"k": `a\`, "j": "b"}},
		{"dangling continuation", "k=a\\", Properties{"k": "a"}},
		{"escapes", `k=a\tb\nc\rd\fe\\f\=g\:h\#`, Properties{"k": "a\tb\nc\rd\fe\\f=g:h#"}},
		{"escaped separator in key", `a\=b=c`, Properties{"a=b": "c"}},
		{"escaped blank in key", `a\ b c`, Properties{"a b": "c"}},
		{"unicode", `k=\u00e9t\u00E9`, Properties{"k": "été"}},
		{"surrogate pair", `k=\ud83d\ude00`, Properties{"k": "😀"}},
		{"utf8 raw", "k=日本", Properties{"k": "日本"}},
		{"last wins", "k=1\nk=2", Properties{"k": "2"}},
		{"comment line ending in backslash does not continue", "#c\\\nk=v", Properties{"k": "v"}},
		{"separator first", "=v", Properties{"": "v"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseProperties(strings.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParsePropertiesMalformedEscape(t *testing.T) {
	for _, in := range []string{`k=\u12`, `k=\uzzzz`, "a=1\nk=\\u00G0"} {
		_, err := ParseProperties(strings.NewReader(in))
		if !errors.Is(err, ErrMalformedEscape) {
			t.Errorf("%q: err = %v, want ErrMalformedEscape", in, err)
		}
	}
	_, err := ParseProperties(strings.NewReader("a=1\nk=\\u00G0"))
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("error %v should name line 2", err)
	}
}

func FuzzParseProperties(f *testing.F) {
	for _, s := range []string{"", "k=v", "a\\\n b", `\u00e9=\ud83d`, "#x\n!y\nk : v\r\n", "k\\", `\u`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		p, err := ParseProperties(strings.NewReader(in))
		if err != nil {
			if !errors.Is(err, ErrMalformedEscape) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		// A simple key=value line written back parses to the same pair.
		for k, v := range p {
			if strings.ContainsAny(k, "\\=: \t\f\r\n#!") || strings.ContainsAny(v, "\\\r\n") || k == "" {
				continue
			}
			if strings.TrimLeft(v, " \t\f") != v {
				continue
			}
			again, err := ParseProperties(strings.NewReader(k + "=" + v))
			if err != nil || again[k] != v {
				t.Fatalf("%q=%q reparsed as %q (%v)", k, v, again, err)
			}
		}
	})
}

type sample struct {
	BrokerClusterName string
	BrokerID          int64 `prop:"brokerId"`
	ListenPort        int
	Enabled           bool
	Ratio             float64
	Small             uint8
	Wait              time.Duration `unit:"ms"`
	WaitSec           time.Duration `unit:"s"`
	Skipped           string        `prop:"-"`
	hidden            string
}

func TestBind(t *testing.T) {
	props := Properties{
		"brokerClusterName": "DefaultCluster",
		"brokerId":          " 1 ",
		"listenPort":        "10911",
		"enabled":           "true",
		"ratio":             "0.75",
		"small":             "255",
		"wait":              "1500",
		"waitSec":           "3",
		"skipped":           "x",
		"hidden":            "y",
		"typo":              "z",
	}
	var s sample
	unknown, err := Bind(props, &s)
	if err != nil {
		t.Fatal(err)
	}
	want := sample{BrokerClusterName: "DefaultCluster", BrokerID: 1, ListenPort: 10911, Enabled: true,
		Ratio: 0.75, Small: 255, Wait: 1500 * time.Millisecond, WaitSec: 3 * time.Second}
	if s != want {
		t.Fatalf("got %+v\nwant %+v", s, want)
	}
	if !reflect.DeepEqual(unknown, []string{"hidden", "skipped", "typo"}) {
		t.Fatalf("unknown = %v", unknown)
	}

	var d sample
	if _, err := Bind(Properties{"wait": "2m"}, &d); err != nil || d.Wait != 2*time.Minute {
		t.Fatalf("duration string: %v %v", d.Wait, err)
	}
}

func TestBindErrors(t *testing.T) {
	var s sample
	for _, p := range []Properties{{"listenPort": "x"}, {"small": "256"}, {"enabled": "yes please"}, {"wait": "soon"}} {
		if _, err := Bind(p, &s); err == nil {
			t.Errorf("%v: no error", p)
		}
	}
	if _, err := Bind(Properties{}, s); !errors.Is(err, ErrNotStructPointer) {
		t.Errorf("non-pointer: %v", err)
	}
	var nilp *sample
	if _, err := Bind(Properties{}, nilp); !errors.Is(err, ErrNotStructPointer) {
		t.Errorf("nil pointer: %v", err)
	}
	type bad struct{ M map[string]string }
	if _, err := Bind(Properties{"m": "x"}, &bad{}); err == nil {
		t.Error("map field: no error")
	}
}

func TestNamesrvConfigDefaults(t *testing.T) {
	var c NamesrvConfig
	c.EnsureDefaults()
	if c.ListenPort != 9876 || c.OrderMessageEnable || c.ScanNotActiveBrokerInterval != 10*time.Second ||
		c.ScanNotActiveBrokerDelay != 5*time.Second || c.BrokerChannelExpiredTime != 120*time.Second {
		t.Fatalf("defaults: %+v", c)
	}
	if !strings.HasSuffix(c.KVConfigPath, filepath.Join("namesrv", "kvConfig.json")) {
		t.Fatalf("kvConfigPath = %s", c.KVConfigPath)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := NamesrvConfig{ListenPort: 70000, ScanNotActiveBrokerInterval: -1, BrokerChannelExpiredTime: -1, ScanNotActiveBrokerDelay: -1}
	err := bad.Validate()
	for _, want := range []string{"listenPort", "kvConfigPath", "scanNotActiveBrokerInterval", "scanNotActiveBrokerDelay", "brokerChannelExpiredTime"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want mention of %s", err, want)
		}
	}
}

func TestLoadNamesrvFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "namesrv.conf")
	content := "# namesrv\nlistenPort=19876\nkvConfigPath=/tmp/kv.json\norderMessageEnable=true\nscanNotActiveBrokerInterval=2000\nrocketmqHome=/opt/rocketmq\n"
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	c, unknown, err := LoadNamesrvFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.ListenPort != 19876 || c.KVConfigPath != "/tmp/kv.json" || !c.OrderMessageEnable ||
		c.ScanNotActiveBrokerInterval != 2*time.Second || c.BrokerChannelExpiredTime != 120*time.Second {
		t.Fatalf("loaded %+v", c)
	}
	if !reflect.DeepEqual(unknown, []string{"rocketmqHome"}) {
		t.Fatalf("unknown = %v", unknown)
	}
	if _, _, err := LoadNamesrvFile(filepath.Join(t.TempDir(), "missing.conf")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}
