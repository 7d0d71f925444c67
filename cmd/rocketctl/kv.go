package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/spf13/cobra"

	"github.com/rocketd/rocketd/internal/protocol"
)

func newKVCommand(c *ctl) *cobra.Command {
	var namespace, key, value string
	kv := &cobra.Command{
		Use:   "kv",
		Short: "Read and change the NameServer's KV configuration",
	}
	kv.PersistentFlags().StringVar(&namespace, "namespace", "", "namespace (e.g. ORDER_TOPIC_CONFIG)")
	_ = kv.MarkPersistentFlagRequired("namespace")

	get := &cobra.Command{
		Use:   "get --namespace NS --key K",
		Short: "Print one value (GET_KV_CONFIG)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			h := protocol.GetKVConfigRequestHeader{Namespace: namespace, Key: key}
			resp, err := c.callOK("kv get", protocol.GetKVConfig, protocol.Ext(&h))
			if err != nil {
				return err
			}
			v := resp.ExtFields["value"]
			if c.json {
				b, err := json.Marshal(map[string]string{"value": v})
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(c.out, "%s\n", b)
				return err
			}
			_, err = fmt.Fprintln(c.out, v)
			return err
		},
	}
	get.Flags().StringVar(&key, "key", "", "key")
	_ = get.MarkFlagRequired("key")

	put := &cobra.Command{
		Use:   "put --namespace NS --key K --value V",
		Short: "Set one value (PUT_KV_CONFIG)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			// Written by hand: an empty value must still be sent.
			ext := map[string]string{"namespace": namespace, "key": key, "value": value}
			if _, err := c.callOK("kv put", protocol.PutKVConfig, ext); err != nil {
				return err
			}
			_, err := fmt.Fprintf(c.out, "%s %s = %q\n", namespace, key, value)
			return err
		},
	}
	put.Flags().StringVar(&key, "key", "", "key")
	put.Flags().StringVar(&value, "value", "", "value")
	_ = put.MarkFlagRequired("key")
	_ = put.MarkFlagRequired("value")

	del := &cobra.Command{
		Use:   "delete --namespace NS --key K",
		Short: "Delete one value (DELETE_KV_CONFIG)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			h := protocol.DeleteKVConfigRequestHeader{Namespace: namespace, Key: key}
			if _, err := c.callOK("kv delete", protocol.DeleteKVConfig, protocol.Ext(&h)); err != nil {
				return err
			}
			_, err := fmt.Fprintf(c.out, "deleted %s %s\n", namespace, key)
			return err
		},
	}
	del.Flags().StringVar(&key, "key", "", "key")
	_ = del.MarkFlagRequired("key")

	list := &cobra.Command{
		Use:   "list --namespace NS",
		Short: "Print every key of a namespace (GET_KVLIST_BY_NAMESPACE)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			h := protocol.GetKVListByNamespaceRequestHeader{Namespace: namespace}
			resp, err := c.callOK("kv list", protocol.GetKVListByNamespace, protocol.Ext(&h))
			if err != nil {
				return err
			}
			if c.json {
				return c.printJSON(resp.Body)
			}
			var t protocol.KVTable
			if err := protocol.UnmarshalFastJSON(resp.Body, &t); err != nil {
				return fmt.Errorf("kv list body: %w", err)
			}
			for _, k := range slices.Sorted(maps.Keys(t.Table)) {
				fmt.Fprintf(c.out, "%s=%s\n", k, t.Table[k])
			}
			return nil
		},
	}
	kv.AddCommand(get, put, del, list)
	return kv
}
