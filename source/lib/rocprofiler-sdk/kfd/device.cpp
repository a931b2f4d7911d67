// MIT License - see LICENSE. (placeholder, being written)
