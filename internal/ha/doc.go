// Package ha replicates a master broker's CommitLog to its slaves with
// RocketMQ's classic HA protocol (rocketmq-spec.md §12): a plain TCP
// connection on haListenPort (listenPort+1), no remoting framing. With
// ServerConfig.TLS / ClientConfig.TLS the connection is TLS (rocketd only:
// Java's HA port has none), decided per connection as on the remoting
// ports (remoting.TLSListener).
//
// Slave -> master: offset reports, each 8 bytes.
//
//	+---------------------------+
//	| int64 big-endian: the     |  the slave's CommitLog max offset; sent
//	| slave's CommitLog end     |  at connect, after each batch it appended
//	+---------------------------+  and at least every haSendHeartbeatInterval
//
// The master reads whole 8-byte units and keeps the last one: it is the
// slave's ack (everything below it is on the slave).
//
// Master -> slave: transfers, each a 12-byte header and data.
//
//		 0               8       12                  12+size
//		+---------------+-------+---------------------+
//		| int64 offset  | int32 | size bytes copied   |
//		| (big-endian)  | size  | from the CommitLog  |
//		+---------------+-------+---------------------+
//
//	  - offset: where the data starts in the CommitLog; equal to the slave's
//	    end (when it is not 0), otherwise the slave drops the connection.
//	  - data: a contiguous byte range of the master's CommitLog at most
//	    haTransferBatchSize (32 KiB) long, never crossing a segment end; it
//	    may cut a record (the slave's dispatcher waits for the rest) and may
//	    hold a BLANK filler and the zeros after it.
//	  - size 0 is a heartbeat, sent after haSendHeartbeatInterval (5 s)
//	    without data.
//
// The master sends nothing before the slave's first report. That report
// fixes where streaming starts: a slave at 0 (empty) starts at the first
// byte of the master's last segment (maxOffset - maxOffset%segmentSize);
// otherwise at the reported offset, so a slave that fell behind catches up
// from its own end. A slave that reports an offset beyond the master's end
// holds data the master never wrote (it diverged): the master logs why,
// sends one heartbeat header carrying its own end (so the slave can log the
// two ends too) and closes the connection; the slave refuses to append
// anything before its end and keeps reporting the state as Diverged until
// an operator fixes its CommitLog. Either side closes a connection silent
// for haHousekeepingInterval (20 s).
//
// # Authentication
//
// Java's HA port has no authentication: anyone who reaches it can stream
// the CommitLog. With authenticationEnabled=true a rocketd master
// challenges every connection before it streams anything:
//
//	master -> slave: a heartbeat header (size 0) whose offset is
//	                 0xFFA5 << 48 | a 48-bit random nonce (negative: never
//	                 a real offset); the 8 offset bytes are the challenge
//	slave -> master: int64 0xFFA6726362646861 (answer mark),
//	                 int16 n, n bytes AccessKey,
//	                 20 bytes HmacSHA1(secretKey, "rocketd-ha-auth:" + challenge),
//	                 then an offset report
//
// The AccessKey must name an enabled SUPER user of the master (the
// broker's innerClientAuthenticationCredentials); the signature is
// compared in constant time. Reports that arrive before the answer are
// skipped. A wrong or missing answer within haHousekeepingInterval closes
// the connection having sent the challenge only. A rocketd slave answers
// with its innerClientAuthenticationCredentials and, without them, stops
// with ErrAuthRequired. A Java slave cannot answer, so a master with
// authentication on replicates to rocketd slaves only: an empty Java slave
// takes the challenge for a heartbeat and is closed after the timeout, a
// non-empty one drops the connection at the unexpected offset; neither
// receives data. A rocketd slave of a Java master is unaffected (no
// challenge is ever sent to it).
//
// SYNC_MASTER: Server implements the CommitLog's ReplicaWaiter. A put that
// waits is answered PUT_OK once some slave's ack covers its end,
// FLUSH_SLAVE_TIMEOUT when none does within syncFlushTimeout, and
// SLAVE_NOT_AVAILABLE at once when no slave is connected within
// haSlaveFallbehindMax bytes of the master's end (spec §12.3). Waits do not
// round-trip per message: the master streams whatever is committed, the
// slave acks after each batch it appended, and one ack completes every
// waiter it covers.
//
// # AutoSwitch mode
//
// RocketMQ 5's controller mode replicates with another protocol
// (Java's AutoSwitchHAService, AutoSwitchHAConnection, AutoSwitchHAClient),
// chosen by ServerConfig.AutoSwitch and ClientConfig.AutoSwitch on the
// same port. All integers are big-endian; every frame starts with the
// sender's state, the ordinal of Java's HAConnectionState (READY 0,
// HANDSHAKE 1, TRANSFER 2, SUSPEND 3, SHUTDOWN 4).
//
// Slave -> master, first: the handshake, 16 bytes.
//
//	 0        4        6        8                  16
//	+--------+--------+--------+------------------+
//	| int32 1| int16  | int16  | int64 brokerId   |
//	| state  | sync-  | async- | (the slave's id  |
//	| HAND-  | From-  | Learner| from the         |
//	| SHAKE  | Last-  | (1:    | controller)      |
//	|        | File   | yes)   |                  |
//	+--------+--------+--------+------------------+
//
// A flag is set when it is 1 (anything else: not set).
//
// Master -> slave, the answer: a 20-byte header and n epoch entries.
//
//	 0        4          8                16        20
//	+--------+----------+----------------+---------+------------------+
//	| int32 1| int32    | int64 the      | int32   | n x 12 bytes:    |
//	| HAND-  | body size| master's       | its last| int32 epoch,     |
//	| SHAKE  | 12 x n   | CommitLog end  | epoch   | int64 startOffset|
//	+--------+----------+----------------+---------+------------------+
//
// Entries ascend in epoch and start offset (the epoch file); an entry
// ends where the next starts, the last at the master's end. A slave
// accepts at most MaxEpochEntries.
//
// The slave then finds the consistent point (store.ConsistentPoint: the
// end of the newest epoch both logs hold starting at the same offset, its
// own last epoch ending at its own end), cuts its store and epoch file
// there (Store.TruncateTo) and only then reports. A slave without epoch
// entries (a new replica) keeps its log, as Java's. Refused, nothing
// truncated: a master whose last epoch is older than the slave's last
// epoch or than ClientConfig.MasterEpoch (ErrStaleMaster, fenced), and
// logs without a common epoch (ErrDiverged).
//
// Slave -> master, then: offset reports, 12 bytes each.
//
//	 0        4                  12
//	+--------+------------------+
//	| int32 2| int64 the slave's|  after its truncation, after each batch
//	| TRANS- | CommitLog end    |  it appended, every haSendHeartbeatInterval
//	| FER    |                  |
//	+--------+------------------+
//
// The first report fixes where streaming starts: its offset, or for 0
// (empty) the master's first offset (the start of its last segment with
// syncFromLastFile). A report beyond the master's end closes the
// connection (diverged).
//
// Master -> slave: transfers, a 36-byte header and data.
//
//		 0        4        8            16       20            28            36
//		+--------+--------+------------+--------+-------------+-------------+------+
//		| int32 2| int32  | int64      | int32  | int64 epoch | int64       | size |
//		| TRANS- | size   | offset     | epoch  | startOffset | confirm-    | bytes|
//		| FER    |        |            |        |             | Offset      |      |
//		+--------+--------+------------+--------+-------------+-------------+------+
//
//	  - data: as in the classic protocol (at most haTransferBatchSize, no
//	    segment end crossed), and never crossing the end of its epoch: every
//	    byte of a transfer was written by the master of epoch, whose range
//	    starts at startOffset. The slave appends the entry (epoch,
//	    startOffset) to its epoch file before the bytes of a new epoch,
//	    refuses an older epoch (ErrStaleMaster), another start of its
//	    last one (ErrDiverged) and a transfer outside the range the
//	    master announced for its epoch (ErrStaleMaster). Java's master
//	    names the next epoch in the header of an epoch's last transfer
//	    (it switches before it builds the header): startOffset is then
//	    offset+size, and the slave takes it so (the entry's start is
//	    right; rocketd's master names the epoch the bytes belong to).
//	  - offset equals the slave's end (unless the slave is empty); size 0 is
//	    a heartbeat. A Java master may heartbeat at offset -1 before it knows
//	    where to start; the slave skips it.
//	  - confirmOffset: the smallest ack of the slaves of the SyncStateSet
//	    (Server.SetSyncStateSet, the master itself counting its end), kept
//	    while a member is not connected (Java's computeConfirmOffset); the
//	    slave keeps min(confirmOffset, its end) (Client.ConfirmOffset).
//
// For the broker (SyncStateSet shrink and expand, allAckInSyncStateSet)
// the master exposes each slave by broker id with its ack and the last
// time it held everything sent to it (Server.SlaveInfos: Java's
// connectionCaughtUpTimeTable), and ProposeSyncStateSet: the set without
// members not connected or not caught up within haMaxTimeSlaveNotCatchup,
// plus connected slaves (not async learners) whose ack reached the
// confirm offset and the start of the last epoch. With
// ServerConfig.AllAckInSyncStateSet a SYNC put waits for every slave of
// the set (PUT_OK at once when the set holds the master only). The
// classic authentication challenge has no AutoSwitch form (Java's
// AutoSwitch has no authentication and its slaves could not answer one):
// Start refuses AutoSwitch with an Authenticator; a controller-mode
// broker with authenticationEnabled runs the port open, as Java does, and
// warns naming it (internal/broker/role).
package ha
