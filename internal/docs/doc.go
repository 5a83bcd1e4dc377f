// Package docs has no code: its tests keep README.md and docs/ honest (links
// that resolve, screenshots that exist, a README a newcomer reads in five
// minutes). The keys table is checked by ui's TestKeysDoc.
package docs
