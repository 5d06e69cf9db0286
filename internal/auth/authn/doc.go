// Package authn turns a request's credentials into the auth.User it is made by, as
// kube-apiserver's authenticators do: client certificates issued by quotad's CA (user from
// CN, groups from O), bearer tokens of --token-auth-file (the admin in system:masters), and
// ServiceAccount tokens (JWTs signed with a key kept in the data dir, as the TokenRequest
// subresource issues them). Anonymous requests are not authenticated (the edge answers
// 401, as upstream with --anonymous-auth=false).
//
// Invariants: every credential that does not verify is refused, never an error the edge
// could mistake for a user; a ServiceAccount token authenticates only while its
// ServiceAccount (and the Pod or Secret it is bound to) exists with the UID the token
// names, which is checked against an in-memory index (Objects), never storage; the
// signing key is read from or created in the data dir with mode 0600.
package authn
