package main

import "strings"

// The library's errors name what a Go caller does about them (a Go call
// or option); the command line says it in its own words: a verb's flags,
// or for lakelog sql the statement.
var (
	verbWords = strings.NewReplacer(
		"give maintenance.Force()", "give --force",
		"schema.AddConstraint and schema.DropConstraint", "lakelog alter --add-constraint and --drop-constraint",
		"(schema.AddConstraint)", "(lakelog alter --add-constraint)",
		"(maintenance.SetProperties)", "(lakelog alter TABLE --set-property)",
	)
	sqlWords = strings.NewReplacer(
		"give maintenance.Force() if", "allow it only if",
		"schema.AddConstraint and schema.DropConstraint", "ALTER TABLE ... ADD CONSTRAINT and DROP CONSTRAINT",
		"(schema.AddConstraint)", "(ALTER TABLE ... ADD CONSTRAINT)",
		"(maintenance.SetProperties)", "(ALTER TABLE ... SET TBLPROPERTIES)",
	)
)

// cliWords is err's message for the user of verb.
func cliWords(verb string, err error) string {
	if verb == "sql" {
		return sqlWords.Replace(err.Error())
	}
	return verbWords.Replace(err.Error())
}
