# fuzz: files of this area (owned by its issue's work).
