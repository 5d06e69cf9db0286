package table

import (
	"fmt"
	"strings"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	rbacv1beta1 "k8s.io/api/rbac/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ---- Role, ClusterRole: no printer upstream, so the default convertor (NAME, CREATED AT) ----

func RolePrinter() Printer { return DefaultPrinter(rbacv1.SchemeGroupVersion.WithKind("Role")) }

func ClusterRolePrinter() Printer {
	return DefaultPrinter(rbacv1.SchemeGroupVersion.WithKind("ClusterRole"))
}

// ---- RoleBinding, ClusterRoleBinding: ROLE, AGE and, with -o wide, the subjects ----

// bindingColumns are upstream's; the ROLE description is the v1beta1 roleRef doc, as
// upstream's printer takes it, and the subject columns name the kind ("roleBinding",
// "clusterRoleBinding").
func bindingColumns(roleRefDoc, kind string) func() []metav1.TableColumnDefinition {
	return func() []metav1.TableColumnDefinition {
		return []metav1.TableColumnDefinition{
			nameColumn(),
			{Name: "Role", Type: "string", Description: roleRefDoc},
			ageColumn(),
			{Name: "Users", Type: "string", Priority: 1, Description: "Users in the " + kind},
			{Name: "Groups", Type: "string", Priority: 1, Description: "Groups in the " + kind},
			{Name: "ServiceAccounts", Type: "string", Priority: 1, Description: "ServiceAccounts in the " + kind},
		}
	}
}

func RoleBindingPrinter() Printer {
	return typedPrinter(rbacv1.SchemeGroupVersion.WithKind("RoleBinding"), func() *rbacv1.RoleBinding { return &rbacv1.RoleBinding{} },
		bindingColumns(rbacv1beta1.RoleBinding{}.SwaggerDoc()["roleRef"], "roleBinding"),
		func(rb *rbacv1.RoleBinding, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			return bindingCells(rb.Name, rb.RoleRef, rb.Subjects, rb.CreationTimestamp, now), nil
		})
}

func ClusterRoleBindingPrinter() Printer {
	return typedPrinter(rbacv1.SchemeGroupVersion.WithKind("ClusterRoleBinding"), func() *rbacv1.ClusterRoleBinding { return &rbacv1.ClusterRoleBinding{} },
		bindingColumns(rbacv1beta1.ClusterRoleBinding{}.SwaggerDoc()["roleRef"], "clusterRoleBinding"),
		func(rb *rbacv1.ClusterRoleBinding, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			return bindingCells(rb.Name, rb.RoleRef, rb.Subjects, rb.CreationTimestamp, now), nil
		})
}

// bindingCells: ROLE is kind/name; subjects are listed by kind, ServiceAccounts as
// namespace/name (upstream's SubjectsStrings), each joined with ", ".
func bindingCells(name string, ref rbacv1.RoleRef, subjects []rbacv1.Subject, created metav1.Time, now time.Time) []interface{} {
	var users, groups, sas []string
	for _, s := range subjects {
		switch s.Kind {
		case rbacv1.ServiceAccountKind:
			sas = append(sas, s.Namespace+"/"+s.Name) // "/name" when the namespace is empty, as upstream
		case rbacv1.UserKind:
			users = append(users, s.Name)
		case rbacv1.GroupKind:
			groups = append(groups, s.Name)
		}
	}
	return []interface{}{name, fmt.Sprintf("%s/%s", ref.Kind, ref.Name), since(created, now),
		strings.Join(users, ", "), strings.Join(groups, ", "), strings.Join(sas, ", ")}
}
