package child

// maxGroups is NGROUPS_MAX on macOS: setgroups(2) fails with EINVAL when
// given more groups, and the command would then not start at all.
const maxGroups = 16
