// Command rocketctl is rocketd's operator tool, in the spirit of RocketMQ's
// mqadmin. Each subcommand is a few remoting calls: first to the NameServer
// (-n / --namesrv, or $NAMESRV_ADDR) to find the brokers, then to the brokers:
//
//	rocketctl topic create -t T [-c cluster | -b addr] [-r 8 -w 8 -p 6 --order]
//	rocketctl topic list | route -t T | status -t T
//	rocketctl send -t T -b body [--tags A] [--keys K] [-p k=v ...] [--count N]
//	rocketctl consume -t T [-q id] [--offset N | --from-beginning] [-g G] [-c N] [--follow]
//	rocketctl group progress -g G [-t T]
//	rocketctl group reset -g G -t T (--time T | --timestamp MS)
//	rocketctl group delete -g G (-c cluster | -b addr) [--remove-offset]
//	rocketctl topic delete -t T [-c cluster]
//	rocketctl message query -t T -k KEY [--unique]   by KEYS entry or message id
//	rocketctl cluster list
//	rocketctl bench produce|consume -t T [-s 1024 -w 64 --mode async ...]   throughput and latency
//	rocketctl kv get|put|delete|list   the NameServer's KV configuration
//	rocketctl broker config get|set (-b addr | -c cluster) [key=value...]
//	rocketctl namesrv config get|set [key=value...]
//
// The older spellings `route`, `topics` and a bare `cluster` still work.
// Output is human-readable; --json prints machine-readable JSON (the response
// body as standard JSON for the NameServer calls, one object per line for
// messages).
package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rocketd/rocketd/internal/auth"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

func main() {
	root, closeClient := newRootCommand()
	err := root.Execute()
	closeClient()
	if err != nil {
		fmt.Fprintln(os.Stderr, "rocketctl:", err)
		os.Exit(1)
	}
}

// The environment variables of the credentials rocketctl signs with.
const (
	accessKeyEnv = "ROCKETCTL_ACCESS_KEY"
	secretKeyEnv = "ROCKETCTL_SECRET_KEY"
)

// ctl holds the shared flags and the connection of one invocation.
type ctl struct {
	namesrv   string
	timeout   time.Duration
	json      bool
	tls       tlsFlags
	accessKey string                  // sign requests as this user (authenticationEnabled)
	sign      func(*remoting.Command) // nil: unsigned; for every client rocketctl makes

	client    *remoting.Client
	tlsConfig *tls.Config // nil: plaintext
	out       io.Writer
}

func defaultNamesrv() string {
	if v := os.Getenv("NAMESRV_ADDR"); v != "" {
		return v
	}
	return "127.0.0.1:9876"
}

// newRootCommand returns the command tree and a function that closes the
// connections it opened (cobra skips post-run hooks when a command fails, so
// the caller closes after Execute).
func newRootCommand() (*cobra.Command, func()) {
	c := &ctl{}
	root := &cobra.Command{
		Use:           "rocketctl",
		Short:         "Operate rocketd (and RocketMQ) NameServers and brokers",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			c.out = cmd.OutOrStdout()
			var err error
			if c.tlsConfig, err = c.tls.config(); err != nil {
				return err
			}
			if c.accessKey != "" {
				// The secret comes from the environment only: a flag
				// would show it in ps and shell history.
				secret := os.Getenv(secretKeyEnv)
				if secret == "" {
					return fmt.Errorf("--access-key %s needs the secret key in $%s", c.accessKey, secretKeyEnv)
				}
				c.sign = auth.Credentials{AccessKey: c.accessKey, SecretKey: secret}.Sign
			}
			c.client = remoting.NewClient(c.clientConfig())
			return nil
		},
	}
	pf := root.PersistentFlags()
	pf.StringVarP(&c.namesrv, "namesrv", "n", defaultNamesrv(), "NameServer address host:port, several separated by ';' ($NAMESRV_ADDR when set)")
	pf.DurationVar(&c.timeout, "timeout", 5*time.Second, "timeout of each call")
	pf.BoolVar(&c.json, "json", false, "print machine-readable JSON")
	c.tls.register(pf)
	pf.StringVar(&c.accessKey, "access-key", os.Getenv(accessKeyEnv),
		"sign requests as this user, for servers with authenticationEnabled (secret in $"+secretKeyEnv+"; default $"+accessKeyEnv+")")
	root.AddCommand(newTopicCommand(c), newSendCommand(c), newConsumeCommand(c), newGroupCommand(c),
		newClusterCommand(c), newKVCommand(c), newBenchCommand(c), newMessageCommand(c), newStatsCommand(c),
		newBrokerCommand(c), newNamesrvCommand(c), newUserCommand(c), newACLCommand(c),
		// The first spellings, kept so scripts written against them go on working.
		newRouteCommand(c, "route", true), newTopicsCommand(c, "topics", true))
	return root, func() {
		if c.client != nil {
			c.client.Close()
		}
	}
}

// call sends one request to the NameServer. --namesrv may list several
// addresses separated by ';' (RocketMQ's namesrvAddr form): they are tried in
// order until one answers. It returns the response whatever its code;
// transport failures are errors.
func (c *ctl) call(code int32, ext map[string]string, body []byte) (*remoting.Command, error) {
	var errs []error
	for _, addr := range strings.Split(c.namesrv, ";") {
		addr = strings.TrimSpace(addr)
		if addr == "" {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
		resp, err := c.client.Invoke(ctx, addr, remoting.NewRequest(code, ext, body))
		cancel()
		if err == nil {
			return resp, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", addr, err))
	}
	if len(errs) == 0 {
		return nil, errors.New("--namesrv: no address given")
	}
	return nil, errors.Join(errs...)
}

// invoke sends one request to a broker and returns its response whatever its
// code; transport failures are errors naming the address.
func (c *ctl) invoke(addr string, code int32, ext map[string]string, body []byte) (*remoting.Command, error) {
	return c.invokeWithin(c.timeout, addr, code, ext, body)
}

// invokeWithin is invoke with its own deadline (long-polling pulls wait
// longer than one ordinary call).
func (c *ctl) invokeWithin(d time.Duration, addr string, code int32, ext map[string]string, body []byte) (*remoting.Command, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	resp, err := c.client.Invoke(ctx, addr, remoting.NewRequest(code, ext, body))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", addr, err)
	}
	return resp, nil
}

// invokeOK is invoke that turns a non-SUCCESS response into an error.
func (c *ctl) invokeOK(what, addr string, code int32, ext map[string]string, body []byte) (*remoting.Command, error) {
	resp, err := c.invoke(addr, code, ext, body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if resp.Code != protocol.Success {
		return nil, &responseError{what: what + " at " + addr, code: resp.Code, remark: resp.Remark}
	}
	return resp, nil
}

// writeJSON writes v as one line of standard JSON.
func (c *ctl) writeJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(c.out, "%s\n", b)
	return err
}

// callOK is call that turns a non-SUCCESS response into an error.
func (c *ctl) callOK(what string, code int32, ext map[string]string) (*remoting.Command, error) {
	resp, err := c.call(code, ext, nil)
	if err != nil {
		return nil, err
	}
	if resp.Code != protocol.Success {
		return nil, &responseError{what: what, code: resp.Code, remark: resp.Remark}
	}
	return resp, nil
}

// responseError is a non-SUCCESS answer.
type responseError struct {
	what   string
	code   int32
	remark string
}

func (e *responseError) Error() string {
	return fmt.Sprintf("%s: response code %d: %s", e.what, e.code, e.remark)
}

// printJSON writes a body as standard JSON (fastjson's unquoted keys quoted).
func (c *ctl) printJSON(body []byte) error {
	norm, err := protocol.NormalizeFastJSON(body)
	if err != nil {
		return fmt.Errorf("response body is not JSON: %w", err)
	}
	_, err = fmt.Fprintf(c.out, "%s\n", norm)
	return err
}
