package config

import (
	"strings"
	"testing"
)

func TestMetricsKeys(t *testing.T) {
	c := NewBrokerConfig()
	c.EnsureDefaults()
	if c.MetricsEnabled() || c.MetricsAddr() != "127.0.0.1:5557" || c.MetricsPprofEnable {
		t.Fatalf("defaults: enabled %v addr %s pprof %v", c.MetricsEnabled(), c.MetricsAddr(), c.MetricsPprofEnable)
	}
	c, unknown, err := BrokerConfigFromProperties(Properties{
		"metricsExporterType": "PROM", "metricsPromExporterHost": "0.0.0.0",
		"metricsPromExporterPort": "9100", "metricsPprofEnable": "true",
	})
	if err != nil || len(unknown) != 0 {
		t.Fatalf("bind: %v, unknown %v", err, unknown)
	}
	c.EnsureDefaults()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if !c.MetricsEnabled() || c.MetricsAddr() != "0.0.0.0:9100" || !c.MetricsPprofEnable {
		t.Fatalf("bound: enabled %v addr %s pprof %v", c.MetricsEnabled(), c.MetricsAddr(), c.MetricsPprofEnable)
	}
}

func TestMetricsExporterTypeValues(t *testing.T) {
	for _, c := range []struct {
		in, want, err string
	}{
		{"DISABLE", MetricsDisable, ""},
		{"prom", MetricsProm, ""},
		{"2", MetricsProm, ""},
		{"0", MetricsDisable, ""},
		{"OTLP_GRPC", "", "Prometheus only"},
		{"1", "", "OTLP_GRPC is not supported"},
		{"LOG", "", "Prometheus only"},
		{"STATSD", "", "want DISABLE or PROM"},
	} {
		got, err := ParseMetricsExporterType(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want one containing %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: %q %v, want %q", c.in, got, err, c.want)
		}
	}
	bc := NewBrokerConfig()
	bc.EnsureDefaults()
	bc.MetricsExporterType = "LOG"
	bc.MetricsPromExporterPort = 70000
	bc.MetricsPromExporterHost = "127.0.0.1:80"
	err := bc.Validate()
	for _, key := range []string{"metricsExporterType", "metricsPromExporterPort", "metricsPromExporterHost"} {
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("Validate: %v, want an error naming %s", err, key)
		}
	}
}
