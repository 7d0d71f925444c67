package config

import (
	"fmt"
	"net"
	"strings"
)

// The metrics exporter types: Java's MetricsExporterType names.
const (
	MetricsDisable  = "DISABLE"
	MetricsOTLPGRPC = "OTLP_GRPC"
	MetricsProm     = "PROM"
	MetricsLog      = "LOG"
)

// Metrics defaults (BrokerConfig; the host is rocketd's, see
// BrokerConfig.MetricsPromExporterHost).
const (
	DefaultMetricsExporterType     = MetricsDisable
	DefaultMetricsPromExporterHost = "127.0.0.1"
	DefaultMetricsPromExporterPort = 5557
)

// ParseMetricsExporterType reads metricsExporterType as Java does: the
// enum name (any case) or its number (0 DISABLE, 1 OTLP_GRPC, 2 PROM,
// 3 LOG). rocketd exports Prometheus only: OTLP_GRPC and LOG are refused
// rather than ignored, so that a broker.conf asking for them does not
// start without the metrics it expects.
func ParseMetricsExporterType(s string) (string, error) {
	v := strings.ToUpper(strings.TrimSpace(s))
	switch v {
	case "0":
		v = MetricsDisable
	case "1":
		v = MetricsOTLPGRPC
	case "2":
		v = MetricsProm
	case "3":
		v = MetricsLog
	}
	switch v {
	case MetricsDisable, MetricsProm:
		return v, nil
	case MetricsOTLPGRPC, MetricsLog:
		return "", fmt.Errorf("config: metricsExporterType %s is not supported: rocketd exports Prometheus only (metricsExporterType=PROM, scraped at metricsPromExporterHost:metricsPromExporterPort)", v)
	}
	return "", fmt.Errorf("config: metricsExporterType %q: want DISABLE or PROM", s)
}

// MetricsEnabled reports whether the broker serves /metrics.
func (c *BrokerConfig) MetricsEnabled() bool {
	v, err := ParseMetricsExporterType(c.MetricsExporterType)
	return err == nil && v == MetricsProm
}

// MetricsAddr is the metrics listener's host:port.
func (c *BrokerConfig) MetricsAddr() string {
	return net.JoinHostPort(c.MetricsPromExporterHost, fmt.Sprint(c.MetricsPromExporterPort))
}

func (c *BrokerConfig) ensureMetricsDefaults() {
	if c.MetricsExporterType == "" {
		c.MetricsExporterType = DefaultMetricsExporterType
	}
	if c.MetricsPromExporterHost == "" {
		c.MetricsPromExporterHost = DefaultMetricsPromExporterHost
	}
	if c.MetricsPromExporterPort == 0 {
		c.MetricsPromExporterPort = DefaultMetricsPromExporterPort
	}
}

func (c *BrokerConfig) validateMetrics() []error {
	var errs []error
	if _, err := ParseMetricsExporterType(c.MetricsExporterType); err != nil {
		errs = append(errs, err)
	}
	if p := c.MetricsPromExporterPort; p < 0 || p > 65535 {
		errs = append(errs, fmt.Errorf("config: metricsPromExporterPort %d out of range 0..65535", p))
	}
	h := c.MetricsPromExporterHost
	if _, _, err := net.SplitHostPort(h); err == nil || strings.ContainsAny(h, " \t") {
		errs = append(errs, fmt.Errorf("config: metricsPromExporterHost %q: want an IP address or host name without a port", h))
	}
	return errs
}
