package model

import "unsafe"

// ShareStrings makes next hold prev's copy of every id both have, and one
// copy of each error text: each refresh decodes every id afresh, and at
// 500,000 ids keeping those copies cost about 50 bytes per id per snapshot
// held. Only the strings change, never their text, and
// a field already sharing is not written (a reader of prev may be looking).
// Both are sorted by id; prev may be nil.
func ShareStrings(prev, next *Snapshot) {
	if next == nil {
		return
	}
	var errs map[string]string
	i := 0
	for j := range next.Txns {
		n := &next.Txns[j]
		if prev != nil {
			// Equality first: most ids are in both, and == is cheaper than <.
			for i < len(prev.Txns) && prev.Txns[i].ID != n.ID && prev.Txns[i].ID < n.ID {
				i++
			}
			if i < len(prev.Txns) {
				share(&n.ID, prev.Txns[i].ID)
			}
		}
		if n.Err != "" {
			if errs == nil {
				errs = map[string]string{}
			}
			if e, ok := errs[n.Err]; ok {
				share(&n.Err, e)
			} else {
				errs[n.Err] = n.Err
			}
		}
	}
}

// share points *dst at src when they hold the same text.
func share(dst *string, src string) {
	if *dst == src && unsafe.StringData(*dst) != unsafe.StringData(src) {
		*dst = src
	}
}
