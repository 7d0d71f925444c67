package broker

// TxnCheckRounds exposes the transaction check-back's finished rounds to
// the external tests (broker_test), which wait on it instead of sleeping.
func TxnCheckRounds(b *Broker) int64 { return b.txn.Rounds() }
