// EpochFileCheck drives Apache RocketMQ's EpochFileCache for
// TestEpochFileJava (run with java's single-file launcher and the
// RocketMQ 5.2.0 jars on the class path):
//
//	write PATH E-S...   append the entries (exit 2 if one is refused)
//	read PATH           print every entry as epoch-start-end
import org.apache.rocketmq.remoting.protocol.EpochEntry;
import org.apache.rocketmq.store.ha.autoswitch.EpochFileCache;

public class EpochFileCheck {
    public static void main(String[] args) throws Exception {
        EpochFileCache cache = new EpochFileCache(args[1]);
        if (!cache.initCacheFromFile()) {
            System.out.println("cannot read " + args[1]);
            System.exit(3);
        }
        switch (args[0]) {
            case "write":
                for (int i = 2; i < args.length; i++) {
                    String[] p = args[i].split("-");
                    if (!cache.appendEntry(new EpochEntry(Integer.parseInt(p[0]), Long.parseLong(p[1])))) {
                        System.out.println("refused " + args[i]);
                        System.exit(2);
                    }
                }
                break;
            case "read":
                for (EpochEntry e : cache.getAllEntries()) {
                    System.out.println(e.getEpoch() + "-" + e.getStartOffset() + "-" + e.getEndOffset());
                }
                break;
            default:
                System.exit(1);
        }
    }
}
