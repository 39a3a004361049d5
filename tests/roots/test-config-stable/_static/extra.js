// a script of the book
