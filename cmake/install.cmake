# Installation and packaging (filled in with the core SDK).
