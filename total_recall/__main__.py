from total_recall.entry import main

main()
