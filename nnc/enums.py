"""NNAPI enumerations with their NDK numeric values (NeuralNetworks.h).

Every public enum is an ``enum.IntEnum`` so that values can be passed where the
NDK takes an ``int32_t`` and compared with the raw numbers found in model files.
"""

from __future__ import annotations

import enum

from nnc.operand_types import OperandType as OperandType  # the operand-type table lives there

#: ANEURALNETWORKS_MAX_SIZE_OF_IMMEDIATELY_COPIED_VALUES
MAX_SIZE_OF_IMMEDIATELY_COPIED_VALUES = 128
#: ANEURALNETWORKS_BYTE_SIZE_OF_CACHE_TOKEN
BYTE_SIZE_OF_CACHE_TOKEN = 32
#: The HAL's MAX_NUMBER_OF_CACHE_FILES: a device needing more model-cache or
#: data-cache files than this is not offered to the application.
MAX_NUMBER_OF_CACHE_FILES = 32
#: ANeuralNetworks_getDefaultLoopTimeout(): 2 s, in nanoseconds.
DEFAULT_LOOP_TIMEOUT_NS = 2_000_000_000
#: ANeuralNetworks_getMaximumLoopTimeout(): 15 s, in nanoseconds.
MAXIMUM_LOOP_TIMEOUT_NS = 15_000_000_000
#: Largest value of a C ``uint64_t`` duration (timeouts).
UINT64_MAX = 2**64 - 1


class OperationType(enum.IntEnum):
    """ANEURALNETWORKS_* operation codes (ADD=0 .. REVERSE=105, OEM=10000)."""

    ADD = 0
    AVERAGE_POOL_2D = 1
    CONCATENATION = 2
    CONV_2D = 3
    DEPTHWISE_CONV_2D = 4
    DEPTH_TO_SPACE = 5
    DEQUANTIZE = 6
    EMBEDDING_LOOKUP = 7
    FLOOR = 8
    FULLY_CONNECTED = 9
    HASHTABLE_LOOKUP = 10
    L2_NORMALIZATION = 11
    L2_POOL_2D = 12
    LOCAL_RESPONSE_NORMALIZATION = 13
    LOGISTIC = 14
    LSH_PROJECTION = 15
    LSTM = 16
    MAX_POOL_2D = 17
    MUL = 18
    RELU = 19
    RELU1 = 20
    RELU6 = 21
    RESHAPE = 22
    RESIZE_BILINEAR = 23
    RNN = 24
    SOFTMAX = 25
    SPACE_TO_DEPTH = 26
    SVDF = 27
    TANH = 28
    BATCH_TO_SPACE_ND = 29
    DIV = 30
    MEAN = 31
    PAD = 32
    SPACE_TO_BATCH_ND = 33
    SQUEEZE = 34
    STRIDED_SLICE = 35
    SUB = 36
    TRANSPOSE = 37
    ABS = 38
    ARGMAX = 39
    ARGMIN = 40
    AXIS_ALIGNED_BBOX_TRANSFORM = 41
    BIDIRECTIONAL_SEQUENCE_LSTM = 42
    BIDIRECTIONAL_SEQUENCE_RNN = 43
    BOX_WITH_NMS_LIMIT = 44
    CAST = 45
    CHANNEL_SHUFFLE = 46
    DETECTION_POSTPROCESSING = 47
    EQUAL = 48
    EXP = 49
    EXPAND_DIMS = 50
    GATHER = 51
    GENERATE_PROPOSALS = 52
    GREATER = 53
    GREATER_EQUAL = 54
    GROUPED_CONV_2D = 55
    HEATMAP_MAX_KEYPOINT = 56
    INSTANCE_NORMALIZATION = 57
    LESS = 58
    LESS_EQUAL = 59
    LOG = 60
    LOGICAL_AND = 61
    LOGICAL_NOT = 62
    LOGICAL_OR = 63
    LOG_SOFTMAX = 64
    MAXIMUM = 65
    MINIMUM = 66
    NEG = 67
    NOT_EQUAL = 68
    PAD_V2 = 69
    POW = 70
    PRELU = 71
    QUANTIZE = 72
    QUANTIZED_16BIT_LSTM = 73
    RANDOM_MULTINOMIAL = 74
    REDUCE_ALL = 75
    REDUCE_ANY = 76
    REDUCE_MAX = 77
    REDUCE_MIN = 78
    REDUCE_PROD = 79
    REDUCE_SUM = 80
    ROI_ALIGN = 81
    ROI_POOLING = 82
    RSQRT = 83
    SELECT = 84
    SIN = 85
    SLICE = 86
    SPLIT = 87
    SQRT = 88
    TILE = 89
    TOPK_V2 = 90
    TRANSPOSE_CONV_2D = 91
    UNIDIRECTIONAL_SEQUENCE_LSTM = 92
    UNIDIRECTIONAL_SEQUENCE_RNN = 93
    RESIZE_NEAREST_NEIGHBOR = 94
    QUANTIZED_LSTM = 95
    IF = 96
    WHILE = 97
    ELU = 98
    HARD_SWISH = 99
    FILL = 100
    RANK = 101
    BATCH_MATMUL = 102
    PACK = 103
    MIRROR_PAD = 104
    REVERSE = 105
    OEM_OPERATION = 10000


class FuseCode(enum.IntEnum):
    NONE = 0
    RELU = 1
    RELU1 = 2
    RELU6 = 3


class PaddingCode(enum.IntEnum):
    SAME = 1
    VALID = 2


class Preference(enum.IntEnum):
    LOW_POWER = 0
    FAST_SINGLE_ANSWER = 1
    SUSTAINED_SPEED = 2


class Priority(enum.IntEnum):
    LOW = 90
    MEDIUM = 100
    HIGH = 110
    DEFAULT = 100  # alias of MEDIUM, as in the NDK


class ResultCode(enum.IntEnum):
    NO_ERROR = 0
    OUT_OF_MEMORY = 1
    INCOMPLETE = 2
    UNEXPECTED_NULL = 3
    BAD_DATA = 4
    OP_FAILED = 5
    BAD_STATE = 6
    UNMAPPABLE = 7
    OUTPUT_INSUFFICIENT_SIZE = 8
    UNAVAILABLE_DEVICE = 9
    MISSED_DEADLINE_TRANSIENT = 10
    MISSED_DEADLINE_PERSISTENT = 11
    RESOURCE_EXHAUSTED_TRANSIENT = 12
    RESOURCE_EXHAUSTED_PERSISTENT = 13
    DEAD_OBJECT = 14


class FeatureLevel(enum.IntEnum):
    LEVEL_1 = 27
    LEVEL_2 = 28
    LEVEL_3 = 29
    LEVEL_4 = 30
    LEVEL_5 = 31
    LEVEL_6 = 1000006
    LEVEL_7 = 1000007
    LEVEL_8 = 1000008


class DeviceType(enum.IntEnum):
    UNKNOWN = 0
    OTHER = 1
    CPU = 2
    GPU = 3
    ACCELERATOR = 4


class DurationCode(enum.IntEnum):
    ON_HARDWARE = 0
    IN_DRIVER = 1
    FENCED_ON_HARDWARE = 2
    FENCED_IN_DRIVER = 3


class Lifetime(enum.Enum):
    """Where an operand's value comes from (the HAL's OperandLifeTime)."""

    TEMPORARY_VARIABLE = 0
    SUBGRAPH_INPUT = 1
    SUBGRAPH_OUTPUT = 2
    CONSTANT_COPY = 3
    CONSTANT_REFERENCE = 4
    NO_VALUE = 5
    SUBGRAPH = 6
