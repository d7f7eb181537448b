"""Front-ends: each turns one kind of source (regex, EBNF, JSON, JSON Schema) into the grammar IR."""
