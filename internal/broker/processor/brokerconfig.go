package processor

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// handleBrokerConfig serves GET_BROKER_CONFIG: the configuration as Java
// properties text ("key=value" lines, keys sorted), durations in the unit
// their key names (ms), as mqadmin getBrokerConfig prints them.
func (p *Processor) handleBrokerConfig(_ *remoting.Conn, _ *remoting.Command) *remoting.Command {
	resp := ok(&protocol.GetBrokerConfigResponseHeader{Version: p.configVersion})
	resp.Body = []byte(brokerConfigText(p.cfg))
	return resp
}

// brokerConfigText renders every field of bc that has a prop tag.
func brokerConfigText(bc *config.BrokerConfig) string {
	v := reflect.ValueOf(bc).Elem()
	t := v.Type()
	lines := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		key := f.Tag.Get("prop")
		if key == "" || key == "-" {
			continue
		}
		var val string
		if d, isDur := v.Field(i).Interface().(time.Duration); isDur {
			val = fmt.Sprint(d.Milliseconds())
			if f.Tag.Get("unit") == "s" {
				val = fmt.Sprint(int64(d.Seconds()))
			}
		} else {
			val = fmt.Sprint(v.Field(i).Interface())
		}
		lines = append(lines, key+"="+val)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n"
}
