#!/bin/sh
# The comparison of user models (issue 29, item 9; docs/user-models.md): expe/user-models.toml (72 simulations),
# its report into expe/results/user-models/, the reference runs of expe/user-models-reference.toml (24 simulations:
# rigid runs with random job overheads of two seeds) and the adequacy table (P of each rigid run against its log
# beside P_ideal) into expe/results/user-models/adequacy.csv. The runs go to runs/campaigns/ (not committed).
#
# Run from the repository: sh expe/user-models.sh. A finished instance is not run again (campaign run resumes).
set -eu
uv run batreplay campaign run expe/user-models.toml
uv run batreplay campaign run expe/user-models-reference.toml
uv run batreplay campaign report expe/user-models.toml
uv run python expe/user_models_adequacy.py
