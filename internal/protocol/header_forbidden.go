package protocol

// UpdateGroupForbiddenRequestHeader is UPDATE_AND_GET_GROUP_FORBIDDEN
// (353): Readable, when set, forbids (false) or allows (true) the group to
// pull the topic; unset only reads the state.
type UpdateGroupForbiddenRequestHeader struct {
	Group    string
	Topic    string
	Readable Optional[bool]
}

func (h *UpdateGroupForbiddenRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "group", h.Group)
	putStr(m, "topic", h.Topic)
	putOptBool(m, "readable", h.Readable)
}

func (h *UpdateGroupForbiddenRequestHeader) Decode(ext map[string]string) error {
	r := extReader{header: "UpdateGroupForbiddenRequestHeader", ext: ext}
	h.Group = r.str("group")
	h.Topic = r.str("topic")
	h.Readable = r.optBool("readable")
	return r.err
}

// GroupForbidden is UPDATE_AND_GET_GROUP_FORBIDDEN's answer body: whether
// the group may pull the topic now.
type GroupForbidden struct {
	Topic    string `json:"topic"`
	Group    string `json:"group"`
	Readable bool   `json:"readable"`
}
