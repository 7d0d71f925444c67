package message

import "unicode/utf8"

// JavaHash is Java's String.hashCode of s: h = 31*h + c over the UTF-16 code
// units of the string (a rune above U+FFFF counts as its surrogate pair),
// with int32 wrap-around. s is read as UTF-8; an invalid byte counts as
// U+FFFD, as Java's decoder would replace it (Java may fold a malformed
// multi-byte sequence into a single U+FFFD where this counts one per byte).
func JavaHash(s string) int32 { return JavaHashFrom(0, s) }

// JavaHashFrom continues Java's String.hashCode from h over s's UTF-16
// code units: JavaHashFrom(JavaHash(a), b) is JavaHash(a+b) without
// building a+b (the key index hashes "topic#key" that way).
func JavaHashFrom(h int32, s string) int32 {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf { // ASCII fast path: tags are almost always ASCII
			h = 31*h + int32(c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		if r >= 0x10000 {
			r -= 0x10000
			h = 31*h + int32(0xD800+(r>>10))
			h = 31*h + int32(0xDC00+(r&0x3FF))
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}

// TagsCode is the consume-queue tags code of a tag (spec §5.9): Java's
// String.hashCode of the TAGS value, sign-extended to int64; 0 for no tag.
// (Delay messages store their delivery time instead: the dispatcher's job.)
func TagsCode(tag string) int64 { return int64(JavaHash(tag)) }
