package protocol

// UpdateGroupForbiddenRequestHeader is UPDATE_AND_GET_GROUP_FORBIDDEN
// (353): Readable, when set, forbids (false) or allows (true) the group to
// pull the topic; unset only reads the state.
type UpdateGroupForbiddenRequestHeader struct {
	Group    string         `ext:"group"`
	Topic    string         `ext:"topic"`
	Readable Optional[bool] `ext:"readable"`
}

// GroupForbidden is UPDATE_AND_GET_GROUP_FORBIDDEN's answer body: whether
// the group may pull the topic now.
type GroupForbidden struct {
	Topic    string `json:"topic"`
	Group    string `json:"group"`
	Readable bool   `json:"readable"`
}
