package main

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/protocol"
)

func newBrokerCommand(c *ctl) *cobra.Command {
	b := &cobra.Command{Use: "broker", Short: "Inspect and change brokers"}
	var addr, cluster string
	cfg := &cobra.Command{
		Use:   "config",
		Short: "Read or change broker configuration (GET_BROKER_CONFIG, UPDATE_BROKER_CONFIG)",
	}
	cfg.PersistentFlags().StringVarP(&addr, "broker", "b", "", "broker address host:port")
	cfg.PersistentFlags().StringVarP(&cluster, "cluster", "c", "", "every broker (masters and slaves) of this cluster")
	targets := func() (map[string]string, error) {
		if (addr == "") == (cluster == "") {
			return nil, fmt.Errorf("give -b broker or -c cluster")
		}
		if addr != "" {
			return map[string]string{addr: addr}, nil
		}
		return c.clusterBrokers(cluster)
	}
	get := &cobra.Command{
		Use:   "get (-b addr | -c cluster) [key...]",
		Short: "Print the configuration (all keys, or the ones named)",
		RunE: func(_ *cobra.Command, keys []string) error {
			ts, err := targets()
			if err != nil {
				return err
			}
			out := map[string]config.Properties{}
			for _, name := range slices.Sorted(maps.Keys(ts)) {
				resp, err := c.invokeOK("broker config get", ts[name], protocol.GetBrokerConfig, nil, nil)
				if err != nil {
					return err
				}
				if out[ts[name]], err = selectKeys(resp.Body, keys); err != nil {
					return fmt.Errorf("broker config of %s: %w", ts[name], err)
				}
			}
			return c.printConfigs(out)
		},
	}
	set := &cobra.Command{
		Use:   "set (-b addr | -c cluster) key=value...",
		Short: "Change keys at run time; the broker persists them (rocketd: only its live keys)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			body, err := propertiesBody(args)
			if err != nil {
				return err
			}
			ts, err := targets()
			if err != nil {
				return err
			}
			var done []string
			for _, name := range slices.Sorted(maps.Keys(ts)) {
				if _, err := c.invokeOK("broker config set", ts[name], protocol.UpdateBrokerConfig, nil, body); err != nil {
					return err
				}
				done = append(done, ts[name])
			}
			return c.printUpdated(done, args)
		},
	}
	cfg.AddCommand(get, set)
	b.AddCommand(cfg)
	return b
}

func newNamesrvCommand(c *ctl) *cobra.Command {
	n := &cobra.Command{Use: "namesrv", Short: "Inspect and change NameServers"}
	cfg := &cobra.Command{
		Use:   "config",
		Short: "Read or change every NameServer's configuration (GET_NAMESRV_CONFIG, UPDATE_NAMESRV_CONFIG)",
	}
	get := &cobra.Command{
		Use:   "get [key...]",
		Short: "Print the configuration of every NameServer given with -n",
		RunE: func(_ *cobra.Command, keys []string) error {
			out := map[string]config.Properties{}
			for _, addr := range c.namesrvAddrs() {
				resp, err := c.invokeOK("namesrv config get", addr, protocol.GetNamesrvConfig, nil, nil)
				if err != nil {
					return err
				}
				if out[addr], err = selectKeys(resp.Body, keys); err != nil {
					return fmt.Errorf("namesrv config of %s: %w", addr, err)
				}
			}
			return c.printConfigs(out)
		},
	}
	set := &cobra.Command{
		Use:   "set key=value...",
		Short: "Change keys on every NameServer given with -n (as mqadmin updateNamesrvConfig)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			body, err := propertiesBody(args)
			if err != nil {
				return err
			}
			var done []string
			for _, addr := range c.namesrvAddrs() {
				if _, err := c.invokeOK("namesrv config set", addr, protocol.UpdateNamesrvConfig, nil, body); err != nil {
					return err
				}
				done = append(done, addr)
			}
			return c.printUpdated(done, args)
		},
	}
	cfg.AddCommand(get, set)
	n.AddCommand(cfg)
	return n
}

// namesrvAddrs splits --namesrv.
func (c *ctl) namesrvAddrs() []string {
	var out []string
	for _, a := range strings.Split(c.namesrv, ";") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// propertiesBody turns key=value arguments into an UPDATE_*_CONFIG body.
func propertiesBody(args []string) ([]byte, error) {
	props := config.Properties{}
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("%q: want key=value", a)
		}
		props[strings.TrimSpace(k)] = v
	}
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(props)) {
		b.WriteString(config.FormatProperty(k, props[k]) + "\n")
	}
	return []byte(b.String()), nil
}

// selectKeys parses a GET_*_CONFIG body and keeps the keys named (all
// when none); a named key the server does not have is an error.
func selectKeys(body []byte, keys []string) (config.Properties, error) {
	all, err := config.ParseProperties(bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return all, nil
	}
	out := config.Properties{}
	for _, k := range keys {
		v, ok := all[k]
		if !ok {
			return nil, fmt.Errorf("no key %q", k)
		}
		out[k] = v
	}
	return out, nil
}

// printConfigs prints key=value lines per server (a header per server
// when there are several), or {addr: {key: value}} with --json.
func (c *ctl) printConfigs(byAddr map[string]config.Properties) error {
	if c.json {
		return c.writeJSON(byAddr)
	}
	for _, addr := range slices.Sorted(maps.Keys(byAddr)) {
		if len(byAddr) > 1 {
			fmt.Fprintf(c.out, "# %s\n", addr)
		}
		props := byAddr[addr]
		for _, k := range slices.Sorted(maps.Keys(props)) {
			fmt.Fprintf(c.out, "%s=%s\n", k, props[k])
		}
	}
	return nil
}

func (c *ctl) printUpdated(addrs, args []string) error {
	if c.json {
		return c.writeJSON(map[string]any{"updated": addrs, "set": args})
	}
	for _, a := range addrs {
		fmt.Fprintf(c.out, "updated %s: %s\n", a, strings.Join(args, " "))
	}
	return nil
}

// clusterBrokers returns every broker address (masters and slaves) of a
// cluster, keyed "brokerName/brokerId"; with cluster "" the NameServer must
// know exactly one cluster.
func (c *ctl) clusterBrokers(cluster string) (map[string]string, error) {
	ci, cluster, err := c.clusterInfo(cluster)
	if err != nil {
		return nil, err
	}
	names := ci.ClusterAddrTable[cluster]
	out := map[string]string{}
	for _, name := range names {
		for id, addr := range ci.BrokerAddrTable[name].BrokerAddrs {
			out[fmt.Sprintf("%s/%d", name, id)] = addr
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("cluster %q has no broker", cluster)
	}
	return out, nil
}
