package broker

// TxnCheckRounds exposes the transaction check-back's finished rounds to
// the external tests (broker_test), which wait on it instead of sleeping.
func TxnCheckRounds(b *Broker) int64 { return b.txn.Rounds() }

// HeldRequests exposes the long-polling holder's held pulls and pops to
// the external tests, which wait for a request to be held before they
// send what wakes it.
func HeldRequests(b *Broker) int { return b.holder.Len() }

// MasterServicesRunning reports whether b runs the delay and timer
// delivery and the transaction check-back (a master's services, which
// follow a runtime role change).
func MasterServicesRunning(b *Broker) (delivery, txnCheck bool) {
	return b.delivery.Load() != nil, b.txn.Running()
}

// RouteFromNamesrv exposes the broker's route lookup (QUERY_ASSIGNMENT,
// gRPC QueryRoute) to the tests of its retries.
var RouteFromNamesrv = routeFromNamesrv
