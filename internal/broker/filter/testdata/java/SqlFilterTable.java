// SqlFilterTable writes the differential table of the SQL92 filter: for
// each expression of sql92_exprs.txt, Java's verdict over each property set
// of sql92_props.txt, evaluated by Apache RocketMQ's own filter module
// (SelectorParser + the expression classes). Run by gen-java-table.sh.
//
// Output line: the escaped expression, a tab, then "P" when Java refuses
// to compile it, else one letter per property set: T (TRUE), F (FALSE),
// N (null, unknown) or X (evaluate threw; the broker drops the message).

import java.io.BufferedReader;
import java.io.FileInputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.rocketmq.filter.expression.EvaluationContext;
import org.apache.rocketmq.filter.expression.Expression;
import org.apache.rocketmq.filter.parser.SelectorParser;

public class SqlFilterTable {
    static List<String> lines(String path) throws Exception {
        List<String> out = new ArrayList<>();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(new FileInputStream(path), StandardCharsets.UTF_8))) {
            for (String l; (l = r.readLine()) != null; ) {
                out.add(l);
            }
        }
        return out;
    }

    static String unescape(String s) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\' && i + 1 < s.length()) {
                char n = s.charAt(++i);
                b.append(n == 'n' ? '\n' : n == 't' ? '\t' : n == 'r' ? '\r' : n);
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }

    public static void main(String[] args) throws Exception {
        List<Map<String, String>> sets = new ArrayList<>();
        for (String l : lines(args[1])) {
            if (l.startsWith("#")) {
                continue;
            }
            Map<String, String> m = new HashMap<>();
            if (!l.equals("-")) {
                for (String kv : l.split("&")) {
                    int eq = kv.indexOf('=');
                    m.put(URLDecoder.decode(kv.substring(0, eq), "UTF-8"), URLDecoder.decode(kv.substring(eq + 1), "UTF-8"));
                }
            }
            sets.add(m);
        }
        PrintStream out = new PrintStream(System.out, true, "UTF-8");
        for (String l : lines(args[0])) {
            if (l.isEmpty() || l.startsWith("#")) {
                continue;
            }
            StringBuilder row = new StringBuilder();
            Expression e;
            try {
                e = SelectorParser.parse(unescape(l));
            } catch (Throwable t) {
                out.println(l + "\tP");
                continue;
            }
            for (Map<String, String> m : sets) {
                EvaluationContext ctx = new EvaluationContext() {
                    public Object get(String name) {
                        return m.get(name);
                    }

                    public Map<String, Object> keyValues() {
                        return new HashMap<>(m);
                    }
                };
                try {
                    Object v = e.evaluate(ctx);
                    row.append(v == null ? 'N' : v == Boolean.TRUE ? 'T' : v == Boolean.FALSE ? 'F' : '?');
                } catch (Throwable t) {
                    row.append('X');
                }
            }
            out.println(l + "\t" + row);
        }
    }
}
