package protocol

// CheckClientRequestBody is the JSON body of CHECK_CLIENT_CONFIG (46): a
// Java consumer sends one per non-TAG subscription to every broker of the
// topic before it starts, and refuses to start unless the answer is
// SUCCESS.
type CheckClientRequestBody struct {
	ClientID         string            `json:"clientId"`
	Group            string            `json:"group"`
	SubscriptionData *SubscriptionData `json:"subscriptionData"`
	Namespace        string            `json:"namespace,omitempty"`
}
