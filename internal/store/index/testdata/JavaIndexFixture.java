// Writes java-index/20260101000000000, the fixture of TestJavaWrittenIndex, with Apache
// RocketMQ 5.2.0's own IndexFile (8 hash slots, 16 items):
//
//   java --add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED \
//     -cp "$HOME/.cache/rocketd-bench/rocketmq-5.2.0/*" JavaIndexFixture.java java-index/20260101000000000
//
// Keys are "topic#key" as IndexService.buildKey makes them; the same
// sequence is replayed by the Go test, which expects identical bytes.
import org.apache.rocketmq.store.index.IndexFile;

public class JavaIndexFixture {
    public static void main(String[] args) throws Exception {
        IndexFile f = new IndexFile(args[0], 8, 16, 0, 0);
        String[] keys = {"T#k0", "T#k1", "T#k2", "T#k0", "T#键😀", "U#k0", "T#k3", "T#k4", "T#k5", "T#k6", "T#k7",
            "T#k8", "T#k9", "T#k0", "T#k1", "T#k2", "T#k3"};
        for (int i = 0; i < keys.length; i++) {
            boolean ok = f.putKey(keys[i], 1000L * i, 1_700_000_000_000L + 1500L * i);
            System.out.println(keys[i] + " " + ok);
        }
        f.flush();
        f.shutdown();
    }
}
