"""The book's data model: game-record types and header fields, what formats produce and storage keeps."""
