"""Integer codes shared by the compiled kernels and the Python layer.

Kernels take plain integers, so the codes live here as module constants (Numba freezes globals
at compile time) rather than as an Enum.
"""

# Point states on the flat int8 board.
EMPTY = 0
BLACK = 1
WHITE = 2

# Rules. Gomocup's INFO rule bitmask maps onto these in alphagomoku.engine.
FREESTYLE = 0  # five or more in a row wins
STANDARD = 1   # exactly five wins; an overline does not
RENJU = 2      # black: exactly five, no overline / double-four / double-three; white: five or more

RULE_NAMES = {"freestyle": FREESTYLE, "standard": STANDARD, "renju": RENJU}

# Game results, as returned by Position.winner. NO_RESULT: the game goes on.
NO_RESULT = -1
DRAW = 0
# BLACK and WHITE above double as "that colour won".

# Input planes of the network (see encode_planes): own stones, opponent stones, last move,
# black-to-move, black's forbidden points (renju only, all zero otherwise).
NUM_PLANES = 5
# A network trained with VCF inputs reads two more, each all ones or all zeros: the side to move
# has a proved VCF, the opponent has one (alphagomoku.game.vcf_planes.write_vcf_planes).
VCF_PLANES = 2
# A network trained with threat inputs reads six more after those: for each empty point, whether
# a stone there makes a five, a four or a three, for each side (alphagomoku.game.threat_planes).
THREAT_PLANES = 6
# A network that reads the rule (every "kata" network) has two more, the last ones, each all ones
# or all zeros: the game is played under the standard rule; under renju. Both zero: freestyle, so
# a position encoded without a rule reads as freestyle (alphagomoku.game.rule_planes).
RULE_PLANES = 2

# Board sizes the kernels support (the Gomocup protocol asks for 5..22 at most in practice).
MIN_SIZE = 5
MAX_SIZE = 22

# Sentinel for "no move" (no last move, no winning move, ...).
NO_MOVE = -1
