"""Reading: file.read and file.info, text decoding, and the line count."""
