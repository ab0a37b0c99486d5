package identity

// PermGroupsAssign is the permission identity names again for
// subs.PermGroupsAssign (subs imports identity).
const PermGroupsAssign = permGroupsAssign
