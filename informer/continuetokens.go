package informer

import (
	"crypto/sha256"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// continueTokens remembers the continue tokens of one list, to notice a
// server that hands one back again. A token may be up to a frame's size
// (16 MiB by default), so only a fixed-size digest of each is kept: a
// list of many pages costs 32 bytes a page, not the tokens themselves. The
// zero value is empty.
type continueTokens struct {
	seen map[[sha256.Size]byte]struct{}
}

// repeated reports whether tok was seen before, and remembers it. The
// empty token (the last page) is never repeated.
func (c *continueTokens) repeated(tok string) bool {
	if tok == "" {
		return false
	}
	d := sha256.Sum256([]byte(tok))
	if _, ok := c.seen[d]; ok {
		return true
	}
	if c.seen == nil {
		c.seen = make(map[[sha256.Size]byte]struct{})
	}
	c.seen[d] = struct{}{}
	return false
}

// maxQuotedToken is how much of a token an error quotes.
const maxQuotedToken = 64

// clipToken quotes the start of tok and says how long it is.
func clipToken(tok string) string {
	if len(tok) <= maxQuotedToken {
		return strconv.Quote(tok)
	}
	cut := maxQuotedToken
	for cut > 0 && !utf8.RuneStart(tok[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d bytes)", strconv.Quote(tok[:cut]), len(tok))
}
