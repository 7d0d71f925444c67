// AutoSwitchPeer runs Apache RocketMQ 5.2.0's own DefaultMessageStore with
// its AutoSwitchHAService (brokerConfig.enableControllerMode=true), for
// TestJavaInteropAutoSwitch:
//
//	slave  <dir> <segment> <masterHA> <epoch> <brokerId> <end>
//	    replicate from masterHA until the CommitLog reaches end, print
//	    "CAUGHT UP <maxPhyOffset> <confirmOffset>" and the epoch entries;
//	master <dir> <segment> <haPort> <epoch> <count> [exit]
//	    take epoch, put count/2 messages, take epoch+1 (re-elected), put
//	    the rest, print the epoch entries and "MASTER READY <maxPhyOffset>"
//	    and serve slaves until killed (with "exit": shut down cleanly).
import java.net.InetSocketAddress;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.rocketmq.common.BrokerConfig;
import org.apache.rocketmq.common.message.MessageDecoder;
import org.apache.rocketmq.remoting.protocol.EpochEntry;
import org.apache.rocketmq.store.DefaultMessageStore;
import org.apache.rocketmq.store.PutMessageResult;
import org.apache.rocketmq.store.config.BrokerRole;
import org.apache.rocketmq.store.config.MessageStoreConfig;
import org.apache.rocketmq.common.message.MessageExtBrokerInner;
import org.apache.rocketmq.store.ha.autoswitch.AutoSwitchHAService;
import org.apache.rocketmq.store.stats.BrokerStatsManager;

public class AutoSwitchPeer {
    public static void main(String[] a) throws Exception {
        String mode = a[0];
        MessageStoreConfig c = new MessageStoreConfig();
        c.setStorePathRootDir(a[1]);
        c.setStorePathCommitLog(a[1] + "/commitlog");
        c.setMappedFileSizeCommitLog(Integer.parseInt(a[2]));
        c.setHaSendHeartbeatInterval(500);
        c.setBrokerRole(mode.equals("slave") ? BrokerRole.SLAVE : BrokerRole.ASYNC_MASTER);
        if (mode.equals("master")) {
            c.setHaListenPort(Integer.parseInt(a[3]));
        }
        BrokerConfig bc = new BrokerConfig();
        bc.setEnableControllerMode(true);
        DefaultMessageStore s = new DefaultMessageStore(c, new BrokerStatsManager("interop", true),
            (topic, queueId, logicOffset, tagsCode, msgStoreTime, filterBitMap, properties) -> { }, bc, new ConcurrentHashMap<>());
        if (!s.load()) {
            throw new IllegalStateException("load failed");
        }
        s.start();
        AutoSwitchHAService ha = (AutoSwitchHAService) s.getHaService();
        int epoch = Integer.parseInt(a[4]);
        if (mode.equals("slave")) {
            long end = Long.parseLong(a[6]);
            ha.changeToSlave("", epoch, Long.parseLong(a[5]));
            ha.updateHaMasterAddress(a[3]);
            long deadline = System.currentTimeMillis() + 60_000;
            while (s.getMaxPhyOffset() < end) {
                if (System.currentTimeMillis() > deadline) {
                    System.out.println("TIMEOUT at " + s.getMaxPhyOffset() + " of " + end);
                    System.exit(1);
                }
                Thread.sleep(50);
            }
            // Let the confirm offset of the next transfer arrive.
            long confirmDeadline = System.currentTimeMillis() + 10_000;
            while (s.getConfirmOffsetDirectly() < end && System.currentTimeMillis() < confirmDeadline) {
                Thread.sleep(50);
            }
            System.out.println("CAUGHT UP " + s.getMaxPhyOffset() + " " + s.getConfirmOffsetDirectly());
            for (EpochEntry e : ha.getEpochEntries()) {
                System.out.println("EPOCH " + e.getEpoch() + " " + e.getStartOffset());
            }
            System.out.flush();
            s.shutdown();
            System.exit(0);
        }
        ha.setLocalBrokerId(1L);
        if (!ha.changeToMaster(epoch)) {
            throw new IllegalStateException("changeToMaster failed");
        }
        int count = Integer.parseInt(a[5]);
        for (int i = 0; i < count; i++) {
            if (i == count / 2 && !ha.changeToMasterWhenLastRoleIsMaster(epoch + 1)) {
                // Re-elected: the next epoch starts mid-log.
                throw new IllegalStateException("changeToMasterWhenLastRoleIsMaster failed");
            }
            MessageExtBrokerInner m = new MessageExtBrokerInner();
            m.setTopic("JavaMaster");
            m.setQueueId(i % 4);
            m.setBody(("java-master-" + i + "-" + "x".repeat(100 + i % 300)).getBytes());
            m.setBornHost(new InetSocketAddress("127.0.0.1", 5000));
            m.setStoreHost(new InetSocketAddress("127.0.0.1", 10911));
            m.setBornTimestamp(1_700_000_000_000L);
            m.putUserProperty("K", "v" + i);
            m.setPropertiesString(MessageDecoder.messageProperties2String(m.getProperties()));
            PutMessageResult r = s.putMessage(m);
            if (!r.isOk()) {
                throw new IllegalStateException("put " + i + ": " + r);
            }
        }
        for (EpochEntry e : ha.getEpochEntries()) {
            System.out.println("EPOCH " + e.getEpoch() + " " + e.getStartOffset());
        }
        System.out.println("MASTER READY " + s.getMaxPhyOffset());
        System.out.flush();
        if (a.length > 6 && a[6].equals("exit")) {
            s.shutdown();
            System.exit(0);
        }
        Thread.sleep(Long.MAX_VALUE);
    }
}
