//go:build !darwin

package child

// maxGroups is 0: no cap. Linux takes up to 65536 groups, more than
// anyone is in.
const maxGroups = 0
