"""The jobs' tunable defaults, in one light module that both the jobs and their command lines import."""

#: consolidation: evictions this recent count toward the eviction hit rate
HIT_WINDOW_DAYS = 30
#: group profiles: a feature is published only when at least this many users hold it
MIN_COHORT = 5
#: restore, by recent activity: what the user stated or recalled in these days is "recent"
RESTORE_RECENT_DAYS = 7
#: restore: cosine to a recent item (passage vs passage) that counts as relevant; multilingual-e5-small puts
#: related passages at about 0.85–0.9 and unrelated ones at about 0.78–0.83
RESTORE_MIN_SIMILARITY = 0.87
#: restore: cosine to --query (query vs passage): related about 0.82–0.9, unrelated below about 0.8
RESTORE_MIN_QUERY_SIMILARITY = 0.82
#: restore: at most this many items per user and run
RESTORE_LIMIT = 20
