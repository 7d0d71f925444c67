// Command chaos is the fault-injection benchmark of issue 12: cycles of
// faults under load from the official Go client, each followed by a
// read-back of every acknowledged message by key and position.
//
//	go run ./bench/chaos --cycles 100                      both flush types, 100 cycles each
//	go run ./bench/chaos --cycles 20 --flush ASYNC_FLUSH --out /tmp/chaos.md
//	go run ./bench/chaos --cycles 10 --role none --kinds kill,disk
//
// Per flush type (--flush, default ASYNC_FLUSH,SYNC_FLUSH) it starts a fresh
// cluster of separate rocketd processes on loopback with ephemeral ports: a
// NameServer, a master (brokerRole --role, default SYNC_MASTER) and a slave
// (none with --role none). The master's store is on an ext4 file system of
// --disk-mib MiB in a loop-mounted image file (16 MiB CommitLog segments,
// 2 MB ConsumeQueue files, the disk check every second), unmounted and
// detached at the end, on errors and on SIGINT/SIGTERM too.
//
// Load: --producers goroutines share one producer of
// github.com/apache/rocketmq-client-go/v2 (retries off: a duplicate is then
// the broker's doing) and send to ChaosTopic (8 queues) messages whose KEYS
// property is a unique key and whose body is the key plus bytes derived from
// it. Every SEND_OK is recorded as key -> (queueId, queueOffset,
// offsetMsgId); every other outcome (FLUSH_DISK_TIMEOUT,
// FLUSH_SLAVE_TIMEOUT, SLAVE_NOT_AVAILABLE, errors) is counted per cycle
// and its key kept as "not acknowledged".
//
// A cycle: load for --steady; the fault; the wait for recovery; the wait
// for the load's own first SEND_OK; load for --steady; the load stops and
// every queue of ChaosTopic is read from its min to its max offset
// (PULL_MESSAGE through rocketd's remoting client: the official pull
// consumer races with itself under -race). Faults (--kinds, round-robin,
// or random per cycle with --seed):
//
//	kill  kill -9 of the master, restarted at once; recovery from the new
//	      process's start to serving sends
//	disk  a filler file takes every free block of the master's file system
//	      and keeps taking what is freed until the load sees a send refused
//	      (at most --refuse-timeout), then for --fault; then it is deleted;
//	      recovery from the deletion
//	stop  SIGSTOP of the slave for --fault, then SIGCONT; recovery from the
//	      SIGCONT
//
// Recovery is the time from the end of the fault to the first SEND_OK of a
// probe (SEND_MESSAGE to ChaosProbe on the master every 50 ms); when none
// comes within --recover-timeout the master is killed and restarted, and the
// cycle notes it.
//
// The check after each cycle covers every message acknowledged so far:
// lost (found nowhere, at or above its queue's min offset), duplicated (a
// key found more than once), moved (found, not at the acknowledged
// position), corrupt (a body that is not the key's), stored but not
// acknowledged, and expired (below its queue's min offset: deleted by the
// store's disk-space cleanup, which deletes the oldest segments whatever
// their age above 85% use, as RocketMQ's does). The report is a Markdown
// table per flush type with totals, printed and written to --out; the exit
// status is 1 when anything was lost, duplicated, moved, corrupt or
// unreadable.
//
// The disk kind needs root, mount, losetup and mkfs.ext4: without them it is
// skipped with a message, unless CI=true, where that is a failure.
// TestChaosShort is the short version go test runs.
package main
